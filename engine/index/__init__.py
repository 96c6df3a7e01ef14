"""The search indexes beside the SQL store: FAISS vectors (`vectors`, `vector_kinds`,
`vector_file`) and the per-generation index kept in step with the database (`live_index`).

Each is a disposable cache of what the database holds: a damaged or stale file is
rebuilt from the stored rows, never trusted over them.
"""
