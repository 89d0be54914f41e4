"""Text similarity: the normalisations of opencode-swarm and openknowledge, and Jaccard joins."""
