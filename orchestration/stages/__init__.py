"""The work of each job type, as stages the worker runs over claimed batches."""
