"""`python -m wizard` runs the command line."""

from wizard.cli import main

raise SystemExit(main())
