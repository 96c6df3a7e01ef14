"""The parallel-sentence finder: margin-based mining over sentence vectors (`margin`,
with `knn_clusters` for large inputs on CPU), ordered alignment of documents that
translate each other (`alignment`), the document-level pipeline (`bitext`), reading and
writing pairs (`bitext_io`) and reviewing them (`bitext_review`).
"""
