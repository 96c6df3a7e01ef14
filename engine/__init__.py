"""Babelfind's engine: documents -> text -> passages -> vectors -> FAISS + SQL; search; mining.

Nothing here knows a window exists (no Qt), and the search path never needs torch.
"""
