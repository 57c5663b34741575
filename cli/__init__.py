"""rebalproof.cli"""
