"""Pure-Python rules, metrics, parsers and the LLM client behind the oTree apps.

Nothing in this package imports oTree: every module can be imported and tested on its own.
"""
