"""The migrations, oldest first: `NNNN_what_it_does.py`, revision id `NNNN`, each revising the one before."""
