"""`python -m skillorchestra_core.cli`: the `skillorchestra` command."""

from skillorchestra_core.cli import main

if __name__ == "__main__":
    main()
