"""`python -m skillorchestra_core.cli`: the `skillorchestra` command."""

from skillorchestra_core.cli import main

main()
