"""The user's tools.

The ``fixlore`` command line, ``doctor``, ``demo``, ``explain`` and the editor
stand-in they drive a server with. The server never imports this package.
"""
