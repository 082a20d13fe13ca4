"""The VectorIndex port on OpenSearch Serverless: the index (index.py), the documents it
writes and reads back (documents.py), and the signed, retrying requests (client.py)."""
