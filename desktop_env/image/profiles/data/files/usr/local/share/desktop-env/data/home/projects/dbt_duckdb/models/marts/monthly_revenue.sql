select date_trunc('month', o.order_date) as month, sum(p.amount) as revenue, count(distinct o.order_id) as orders
from {{ ref('stg_orders') }} o
join {{ ref('stg_payments') }} p using (order_id)
where o.status in ('completed', 'shipped')
group by 1
order by 1
