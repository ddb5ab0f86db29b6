"""The queue runtime: the job queue, the batch worker that runs a stage over claimed jobs, failure
classes, and the processes and background threads the worker keeps."""
