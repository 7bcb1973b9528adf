"""Code actions and commands.

Assembly and ranking of the upstreams' actions and the learned fixes,
``fixlore.accept`` and the knowledge commands, ``fixlore.explain``.
"""
