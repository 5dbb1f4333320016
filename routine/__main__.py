import sys

from routine.cli import main

sys.exit(main())
