-- One row per customer: order count, first/last order and lifetime value of completed or shipped orders.
with orders as (
    select o.order_id, o.customer_id, o.order_date, o.status, sum(i.line_total) as order_total
    from {{ ref('stg_orders') }} o
    join {{ ref('stg_order_items') }} i using (order_id)
    group by all
)
select
    c.customer_id, c.first_name, c.last_name, c.country,
    count(o.order_id) as order_count,
    min(o.order_date) as first_order_date,
    max(o.order_date) as last_order_date,
    coalesce(sum(o.order_total) filter (where o.status in ('completed', 'shipped')), 0) as lifetime_value
from {{ ref('stg_customers') }} c
left join orders o using (customer_id)
group by all
