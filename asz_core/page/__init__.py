"""The page: a read-only web view of a storage root, upstream's JSON API, usage figures and exports.

* :mod:`asz_core.page.catalogue` — every read the page makes of the root: the list of
  conversations, one conversation's ``asz.view`` document and the page's additions to it, one
  landed record, a session's provider-body files. Nothing else in this package opens a file of
  the root.
* :mod:`asz_core.page.api` — the JSON API as pure functions of a request (path and query) to a
  status and a body, so it is tested without a socket.
* :mod:`asz_core.page.server` — :class:`http.server.ThreadingHTTPServer` over the API and the
  packaged assets (``static/``), loopback only unless told otherwise.
* :mod:`asz_core.page.watch` — ``serve --watch``: passes and parses beside the page.
* :mod:`asz_core.page.usage` — tokens and cost by day, month, session, model or project, priced by
  :mod:`asz_core.page.prices` (the packaged ``prices.yaml``, the user's laid over it).
* :mod:`asz_core.page.export` — one conversation as one self-contained HTML or Markdown file.

Nothing here writes to the root (``serve --watch``'s passes are the pipeline's, run beside the
page), and nothing here fetches from the network.
"""
