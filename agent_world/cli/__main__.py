from agent_world.cli import main

main()
