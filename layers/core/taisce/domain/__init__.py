"""The domain core: pure rules of memory and recall. No boto3, no environment."""
