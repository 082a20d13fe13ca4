"""`python -m taisce.evaluation bench quality FILE ...`"""

import sys

from .cli import main

sys.exit(main())
