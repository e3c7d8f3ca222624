"""``python -m tcprepro.cli``: the ``tcprepro`` command."""

import sys

from tcprepro.cli import main

sys.exit(main())
