"""Clients for the cloud services account tasks use: BigQuery, Snowflake, dbt Cloud, ServiceNow (one module each)."""
