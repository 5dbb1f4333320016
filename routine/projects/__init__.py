"""Projects and their members: who is assigned to which case file (Projects/<Name>/) or task."""
