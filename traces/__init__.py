"""rebalproof.traces"""
