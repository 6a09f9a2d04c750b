-- Units and revenue per product over completed and shipped orders.
select p.id as product_id, p.name, p.category,
       coalesce(sum(i.quantity), 0) as units_sold,
       coalesce(sum(i.line_total), 0) as revenue
from {{ source('shop', 'products') }} p
left join {{ ref('stg_order_items') }} i on i.product_id = p.id
left join {{ ref('stg_orders') }} o on o.order_id = i.order_id and o.status in ('completed', 'shipped')
group by p.id, p.name, p.category
