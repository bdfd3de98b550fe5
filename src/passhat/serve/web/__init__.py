"""`passhat serve`: the web dashboard of runs and the operator inbox, behind accounts with two-factor sign-in."""
