"""A run's files on disk: the run directory and the rules that keep it safe
(``rundir.py``), its recorded paths, checkpoint, best model, figure counts,
the machine it ran on, and the same interface kept in memory."""
