"""The stacks we start: ``hreg dev`` (``devstack``) and the multi-host layout on one machine
(``cluster``)."""
