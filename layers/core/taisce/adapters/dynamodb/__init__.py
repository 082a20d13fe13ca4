"""The DynamoDB store (docs/dynamodb.md): one table, single-table design.

store.py's DynamoDbStore holds one part per port, each in the module named as the
port's (its docstring says how they are put together), over: keys.py, the table's
layout, every key written once; codec.py, records as items and back (and item sizes);
client.py, the table's I/O (the client, reads in waves, batch writes, the one
TransactWriteItems and its retry rules); units.py, what is stored together and the
work marks it carries. items.py and reads.py make the recall's reads cheaper (answers
taken from DynamoDB's JSON as sent, and sent without botocore's per-call machinery).
"""
