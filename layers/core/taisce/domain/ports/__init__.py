"""The ports the domain depends on: protocols that adapters implement.

One module per capability, so a domain module imports only the protocol it needs and
the dependency points one way (adapters -> domain). This package re-exports nothing.

  store.py        Store: all the store's capabilities in one protocol
  facts.py        FactStore          names.py      NameLookup
  aliases.py      AliasStore         messages.py   MessageStore
  listing.py      ListingStore       work.py       WorkMarks (vector, report, extraction marks)
  reports.py      ReportStore        projects.py   ProjectReads (whole-project reads)
  erasure.py      ErasureStore       credentials.py CredentialStore
  vectors.py      Embedder, VectorIndex      extractor.py  Extractor
  queue.py        WorkQueue          spans.py      Spans (where a tracer may time a step)

The records the ports carry (Hit, VectorItem, PendingVector, ErasurePlan, Report, ...)
and what a store can do beyond its methods (StoreCapabilities) are in domain/model.py;
the recall filters they apply (FactFilter, MessageFilter) in domain/filters.py.
"""
