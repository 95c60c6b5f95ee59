"""RQ jobs and bot policies that play seats asynchronously."""
