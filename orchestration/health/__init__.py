"""What an operator scrapes and is alerted on: the /metrics endpoint's figures, read from the
database on each scrape, and the alerts posted to a webhook."""
