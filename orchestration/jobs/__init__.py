"""The job types, each declared once (specs), and the checks their assets run over a batch."""
