"""What correct means: ADK eval sets, their corpora and the offline answer metric."""
