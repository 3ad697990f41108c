"""The embedded simulator: a home that lives on the CPU (docs/episodes.md, docs/dynamics.md).

:class:`~homeloop.sim.episode.Episode` is the entry point: a home file, a
task, a robot body and a seed give a world whose hazards evolve, whose
devices sense and act, and whose services an agent calls as tools.
"""
