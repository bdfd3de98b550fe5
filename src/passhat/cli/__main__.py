"""`python -m passhat.cli`: the `passhat` command."""

from passhat.cli import main

if __name__ == "__main__":
    main()
