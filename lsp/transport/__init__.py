"""The editor's connection.

The pygls server and protocol (raw messages, error answers), framing, the
upstreams' JSON-RPC, text sync, raw-params validators, logging to the editor.
"""
