"""The Dagster webserver's GraphQL API as a client: backfills of court partitions launched and
followed from the command line."""
