"""What each step shows: the page model every renderer reads, and the views that fill it."""
