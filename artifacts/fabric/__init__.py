"""Fabric and host evidence: snapshot pairing, rates, findings rules, fleet outliers.

Pure modules (no Django): rates.py, rules.py, outliers.py. The rest reads and writes rows.
"""
