"""The DynamoDB store (docs/dynamodb.md): one table, single-table design.

keys.py holds the table's layout, every key written once; codec.py the records as
items and back (and item sizes); client.py the table's I/O (the client, reads in
waves, batch writes, the one TransactWriteItems and its retry rules); store.py the store;
items.py and reads.py make the recall's reads cheaper (read answers taken from
DynamoDB's JSON as sent, and sent without botocore's per-call machinery).
"""
