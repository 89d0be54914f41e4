from swarmq.cli import main

main()
