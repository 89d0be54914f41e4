"""``swarmq demo``: a scratch swarm with a scripted EXAMPLE agent that visibly learns."""
