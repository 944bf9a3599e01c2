"""contend.studies: the harnesses that plan runs."""
