"""rebalproof.solver"""
