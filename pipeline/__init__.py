"""rebalproof.pipeline"""
