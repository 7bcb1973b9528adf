"""Base knowledge shipped with fixlore: ``patterns.json`` in the export format.

Loaded read-only into the ``base`` scope (switch off with ``baseKnowledge: false``).
Counts are modest on purpose: anything the user does outranks them.
"""
