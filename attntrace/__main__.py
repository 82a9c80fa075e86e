from attntrace.cli import main

raise SystemExit(main())
