"""The search indexes beside the SQL store: FAISS vectors (`vectors`, `vector_kinds`,
`vector_file`), the BM25 keyword index (`keyword_index`, its tokenisation in
`keyword_tokens`), the per-generation index kept in step with the database
(`live_index`), the passages' hubness penalties that keep near-everything passages down
(`hubness`), and what search builds on them: restriction of the allowed passages
(`restrict`) and the fusion of dense and keyword scores (`fusion`).

Each index is a disposable cache of what the database holds: a damaged or stale file is
rebuilt (or repaired) from the stored rows, never trusted over them.
"""
