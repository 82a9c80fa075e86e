from attntrace.cli import main

main()
