from git_evidence.cli import main

raise SystemExit(main())
