"""The knowledge graph: typed nodes and edges derived from the vault and the run journal.

``extract`` reads one note into its facts (pure), ``graph`` keeps the networkx graph and
re-links only what one note contributes, ``cache`` persists the facts in the state dir,
``views`` cuts the project, agent and workspace views, ``canvas`` lays a view out as JSON
Canvas, ``publish`` writes canvases into the vault, ``context`` gives agents a scope-checked
neighbourhood. networkx is imported only inside ``graph``.
"""
