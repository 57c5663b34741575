"""rebalproof.properties"""
