from git_evidence.cli.main import main

raise SystemExit(main())
